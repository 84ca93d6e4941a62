# Session 25: the decode attention's splits merged by the last split program (ops.MERGE_IN_SPLIT, no combine launch),
# the combine / split triggering the output projection's early launch (ops.ATTN_PDL), an early split launch that
# cannot stack on a multiprocessor (5 stages: 1 a multiprocessor), the norm_quantize grid under PDL; tg128 A/B
# in fresh processes on one machine, then tg128@16384 of the tree and of the merged / triggered forms.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
ab() { timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-62; }
S5="ATTN_SPLITS=[(256,2,64,5),(2048,8,64),(8192,16,128),(4611686018427387904,32,64)]"
ab --label base1
ab --label c01 --set "ATTN_PDL=((0,0),(0,1))"
ab --label m2 --set MERGE_IN_SPLIT=2
ab --label m2t2 --set MERGE_IN_SPLIT=2 --set "ATTN_PDL=((0,2),(0,0))"
ab --label m2t1 --set MERGE_IN_SPLIT=2 --set "ATTN_PDL=((0,1),(0,0))"
ab --label s5c01 --set "ATTN_PDL=((0,0),(0,1))" --set "$S5"
ab --label s5e10c01 --set "ATTN_PDL=((1,0),(0,1))" --set "$S5"
ab --label s5e11c11 --set "ATTN_PDL=((1,1),(1,1))" --set "$S5"
ab --label nb1 --set "ATTN_PDL=((0,0),(0,1))" --set mmvq.NORM_BLOCKS=1
ab --label nb4w1 --set "ATTN_PDL=((0,0),(0,1))" --set mmvq.NORM_BLOCKS=4 --set mmvq.NORM_WARPS=1
ab --label base2
python3 bench/cuda_tree_ab.py --compare $OUT/r/ab/tree-base1.npz $OUT/r/ab/tree-m2.npz > $OUT/r/cmp.txt
python3 bench/cuda_tree_ab.py --compare $OUT/r/ab/tree-base1.npz $OUT/r/ab/tree-m2t2.npz >> $OUT/r/cmp.txt
head -3 $OUT/r/cmp.txt
ab --label d_base --depth 16384
ab --label d_m32 --depth 16384 --set MERGE_IN_SPLIT=32
ab --label d_c01 --depth 16384 --set "ATTN_PDL=((0,0),(0,1))"
rm -f $OUT/r/ab/*.npz
cd $OUT/r/ab && python3 -c "
import json,glob,numpy as np
for f in sorted(glob.glob('*.json')):
    d=json.load(open(f)); print(f'{d[\"label\"]:10} {np.mean(d[\"tok_s\"]):7.1f} {d[\"replay_gpu_us\"]:8.1f}', f'{np.mean(d[\"tok_s_depth\"]):7.1f}' if 'tok_s_depth' in d else '')
" > ../table.txt; cd - >/dev/null; tar czf $OUT/r/ab.tgz -C $OUT/r ab; rm -rf $OUT/r/ab; tail -3 $OUT/r/err.log; cat $OUT/r/table.txt
