# Session 25: the decode attention's split and combine launches in the PDL chain, forms of (wait, trigger) each
# (ops.ATTN_PDL), tg128 A/B in fresh processes on one machine; logits of each against the tree's.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
ab() { timeout 80 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log; }
ab --label base1
ab --label c01 --set "ATTN_PDL=((0,0),(0,1))"
ab --label s01c11 --set "ATTN_PDL=((0,1),(1,1))"
ab --label s11c11 --set "ATTN_PDL=((1,1),(1,1))"
ab --label s12c11 --set "ATTN_PDL=((1,2),(1,1))"
ab --label s11c01 --set "ATTN_PDL=((1,1),(0,1))"
ab --label s10c00 --set "ATTN_PDL=((1,0),(0,0))"
ab --label base2
for v in c01 s01c11 s11c11 s12c11; do echo $v; python3 bench/cuda_tree_ab.py --compare $OUT/r/ab/tree-base1.npz $OUT/r/ab/tree-$v.npz | head -3; done
rm -f $OUT/r/ab/*.npz
tail -5 $OUT/r/err.log
