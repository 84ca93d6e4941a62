# Session 35, call b: the matvec configurations in the captured step (they were chosen by standalone sweeps on the
# H200 before PDL, session 9-20). Session 35a's skip-ceiling rows (H100): O 134.7 us a step, QKV 214, GLU 751, down
# 535 -- down ~2 us a layer above a line through O and GLU. Each row one SHAPE_CONFIG entry (R, units a thread,
# warps, 1, 1, 2, U) against the tree, fresh processes.
export AB_TIMEOUT=50
. bench/calls/ab_env.sh
D4="(12,4096,12288,False)"; D6="(14,4096,12288,False)"; O="(12,4096,4096,False)"; G="(12,12288,4096,True)"
LM="(14,151936,4096,False)"
ab --label base
sc d4_s2 "$D4:(2,1,1,1,1,2,1)"
sc d4_s4 "$D4:(4,1,1,1,1,2,1)"
sc d4_r1 "$D4:(1,2,1,1,1,2,2)"
sc d4_w2 "$D4:(2,2,2,1,1,2,1)"
sc d4_u1 "$D4:(2,2,1,1,1,2,1)"
sc d6_a "$D6:(2,2,1,1,1,2,1)"
sc d6_s4 "$D6:(4,1,1,1,1,2,1)"
sc d6_r1 "$D6:(1,1,1,1,1,2,2)"
sc d6_u1 "$D6:(2,1,1,1,1,2,1)"
sc d6_w2 "$D6:(2,1,2,1,1,2,1)"
ab --label base2
sc o_s2 "$O:(2,1,1,1,1,2,1)"
sc o_r1 "$O:(1,2,1,1,1,2,2)"
sc o_s4 "$O:(4,1,1,1,1,2,1)"
sc g_r1 "$G:(1,1,1,1,1,2,1)"
sc g_u2 "$G:(2,1,1,1,1,2,2)"
sc g_p2 "$G:(2,2,1,1,1,2,1)"
sc g_w2 "$G:(2,1,2,1,1,2,1)"
sc lm_s2 "$LM:(2,1,1,1,1,2,1)"
sc lm_p2 "$LM:(4,2,1,1,1,2,1)"
sc lm_w2 "$LM:(4,1,2,1,1,2,1)"
ab --label base3
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  zb s35_h200_tg -p 512 -n 128
fi
