import sys, statistics as S
f=sys.argv[1]
rows=[]
for line in open(f):
    if line.startswith('L '):
        p=line.split(); L=int(p[1]);B=int(p[3]);SM=int(p[5]);W=int(p[7]); t=list(map(int,p[8:]))
        rows.append((L,B,SM,W,t))
import collections
byL=collections.defaultdict(list)
for r in rows: byL[r[0]].append(r)
prev_exit=None
for L in sorted(byL):
    rs=byL[L]
    entry=min(r[4][0] for r in rs); sync=[r[4][1] for r in rs]; ex=[r[4][19] for r in rs]
    first_wait=[r[4][3]-r[4][1] for r in rs]
    # per block: last exit - first exit
    blk=collections.defaultdict(list)
    for r in rs: blk[r[1]].append(r)
    spread=[max(x[4][19] for x in v)-min(x[4][19] for x in v) for v in blk.values()]
    blkexit=[max(x[4][19] for x in v) for v in blk.values()]
    blksync=[min(x[4][1] for x in v) for v in blk.values()]
    # busy time per warp: sum(done-wait)
    busy=[sum(r[4][4+2*m]-r[4][3+2*m] for m in range(8) if r[4][3+2*m]>=0 and r[4][4+2*m]>=0) for r in rs]
    waitt=[sum(max(0,r[4][3+2*m]-(r[4][2+2*m] if m>0 else r[4][2])) for m in range(8) if r[4][3+2*m]>=0) for r in rs]
    print(f"L{L}: entry {entry/1000:.2f} sync min/med/max {min(sync)/1000:.2f}/{S.median(sync)/1000:.2f}/{max(sync)/1000:.2f} exit min/med/max {min(ex)/1000:.2f}/{S.median(ex)/1000:.2f}/{max(ex)/1000:.2f} | span(sync-min..exit-max) {(max(ex)-min(sync))/1000:.2f} | firstwait med/max {S.median(first_wait)/1000:.2f}/{max(first_wait)/1000:.2f} | SM exit spread med/max {S.median(spread)/1000:.2f}/{max(spread)/1000:.2f} | blk last exit spread {(max(blkexit)-min(blkexit))/1000:.2f} | busy med/min/max {S.median(busy)/1000:.2f}/{min(busy)/1000:.2f}/{max(busy)/1000:.2f} | chunk waits med/max {S.median(waitt)/1000:.2f}/{max(waitt)/1000:.2f}" + (f" | gap prev last exit -> sync min {(min(sync)-prev_exit)/1000:.2f}" if prev_exit else ""))
    prev_exit=max(ex)
