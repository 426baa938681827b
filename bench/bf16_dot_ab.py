#!/usr/bin/env python3
"""bf16 on AVX512-BF16 dot products (attn-run --bf16-dot) against f32 FMAs
after widening (--bf16-dot=false): same binary, alternating, 5 rounds, with
both peaks (attn-fma-peak --kind=f32 / bf16-dot) measured in each round.
The programs are the CPU suite's f32 sdpa and projection programs
(bench/cpu/programs) with every f32 made bf16. Usage (from the repository
root, on a host with AVX512-BF16):

  python3 bench/bf16_dot_ab.py [--build build]
"""
import argparse, json, os, re, statistics, subprocess, sys, tempfile
ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument('--build', default='build')
args = ap.parse_args()
B = os.path.join(args.build, 'bin') + '/'
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'cpu', 'programs')
tmp = tempfile.mkdtemp()
progs = []
for name in ('sdpa_f32_T1024_none', 'sdpa_f32_T2048_none', 'project_T128_768',
             'project_T1024_768', 'project_T1024_2304', 'project_T2048_2304'):
    text = open(os.path.join(src, name + '.mlir')).read().replace('f32', 'bf16')
    progs.append(os.path.join(tmp, name.replace('_f32', '_bf16') + ('' if 'sdpa' in name else '_bf16') + '.mlir'))
    open(progs[-1], 'w').write(text)
def peak(kind):
    out = subprocess.run([B + 'attn-fma-peak', '--kind=' + kind, '--threads=2', '--seconds=1'],
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])['gflops']
def flops(p):
    m = re.search(r'sdpa_bf16_T(\d+)', p)
    if m:
        t = int(m.group(1)); return 4 * 12 * t * t * 64
    m = re.search(r'T(\d+)_(\d+)', p); t, o = int(m.group(1)), int(m.group(2))
    return 2 * t * 768 * o
peaks = {'f32': [], 'bf16-dot': []}
res = {}
for r in range(5):
    for k in peaks: peaks[k].append(peak(k))
    for p in progs:
        for d in ('true', 'false'):
            out = subprocess.run([B + 'attn-run', p, '--pipeline=cpu', '--num-threads=2', '--repeat=9',
                                  '--min-seconds=0.3', '--random-inputs', '--seed=1', '--bf16-dot=' + d,
                                  '--json', '--quiet'], capture_output=True, text=True).stdout
            res.setdefault((p, d), []).append(json.loads(out)['median_ms'])
pf, pd = statistics.median(peaks['f32']), statistics.median(peaks['bf16-dot'])
print(f'peaks (median of 5, 2 threads): f32 FMA {pf:.1f} GFLOP/s, vdpbf16ps {pd:.1f} GFLOP/s ({pd/pf:.2f}x)')
print('| program | bf16-dot ms | of the dot peak | f32 FMAs ms | of the f32 peak | dot / f32 |')
print('|---|---|---|---|---|---|')
for p in progs:
    a, b = statistics.median(res[(p, 'true')]), statistics.median(res[(p, 'false')])
    f = flops(p)
    print(f'| {p.split("/")[-1]} | {a:.3f} | {100*f/a/1e6/pd:.0f} % | {b:.3f} | {100*f/b/1e6/pf:.0f} % | {a/b:.3f} |')
