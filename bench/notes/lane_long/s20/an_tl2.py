import sys, statistics as S, collections
f=sys.argv[1]
rows=[]
for line in open(f):
    if line.startswith('L '):
        p=line.split(); rows.append((int(p[1]),int(p[3]),int(p[5]),int(p[7]),list(map(int,p[8:]))))
rows=[r for r in rows if r[0]>=1]
# per block sync reference
bs={}
for r in rows:
    k=(r[0],r[1]); bs[k]=min(bs.get(k,1<<60), r[4][1])
stage=[r[4][2]-r[4][1] for r in rows]
print("staging issue us med/max", S.median(stage)/1000, max(stage)/1000)
per=collections.defaultdict(lambda: collections.defaultdict(list))
for r in rows:
    t=r[4]; s=bs[(r[0],r[1])]; w=r[3]
    per[w]['stage'].append((t[2]-s)/1000)
    for m in range(4):
        per[w][f'w{m}'].append((t[3+2*m]-s)/1000); per[w][f'd{m}'].append((t[4+2*m]-s)/1000)
    per[w]['exit'].append((t[19]-s)/1000)
print("warp  stage  w0 d0 | w1 d1 | w2 d2 | w3 d3 | exit  (us from the block's sync, medians)")
for w in range(16):
    d=per[w]; m=lambda k: S.median(d[k])
    print(f"{w:2d} {m('stage'):5.2f} {m('w0'):5.2f} {m('d0'):5.2f} | {m('w1'):5.2f} {m('d1'):5.2f} | {m('w2'):5.2f} {m('d2'):5.2f} | {m('w3'):5.2f} {m('d3'):5.2f} | {m('exit'):5.2f}")
# per-block: time when all chunks landed ~ max over warps of wait of block needing chunk 7
