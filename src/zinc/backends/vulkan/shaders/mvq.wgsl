// y (NT, N) = x (NT, K) @ W (N, K).T for NT <= 4 activation rows (rows T0 .. T0 + NT of x and y: longer
// inputs take several dispatches) on 8-bit activations
// (lib/q8.wgsl) with integer dot products. A workgroup of S * L threads covers S * R rows: L lanes per
// slot of R rows; a lane walks the row's units u = lane + i * L (mvq_<type>.wgsl; UNITS per row is a
// compile-time constant, so the loop unrolls and all of a lane's weight loads are in flight at once),
// each unit's activations loaded once for the R rows and its weights once for the NT activation rows;
// one reduction over the L lanes at the end. has_bias = 1 adds BIAS (N). The output columns may be
// split at n1 <= n2 into Y (NT, n1), Y2 (NT, n2 - n1), Y3 (NT, N - n2) (a fused Q/K/V projection).
// Rows n >= nw1 are row n - nw1 of a second weight W2 of the same type (two products of one input in
// one dispatch; nw1 = N: none), nw1 % (S R) == 0 keeping each workgroup on one weight.
struct Params { N: u32, row_vec4: u32, has_bias: u32, n1: u32, n2: u32, t0: u32, nw1: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> XQ: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> W: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> Y: array<f32>;
@group(0) @binding(4) var<storage, read> BIAS: array<f32>;
@group(0) @binding(5) var<storage, read_write> Y2: array<f32>;
@group(0) @binding(6) var<storage, read_write> Y3: array<f32>;
@group(0) @binding(7) var<storage, read> W2: array<vec4<u32>>;

const L: u32 = {{L}}u;
const R: u32 = {{R}}u;
const S: u32 = {{S}}u;
const NT: u32 = {{NT}}u;
const K: u32 = {{K}}u;
const UNITS: u32 = {{UNITS}}u;
const WG: u32 = L * S;
const NACC: u32 = R * NT;  // sums per thread (lib/mv_reduce_*.wgsl)
const XROW: u32 = K / 16u + K / 32u;  // vec4 per activation row (lib/q8.wgsl)

// xq(i): vec4 i of the activations; x_stage: rows t0 .. t0 + NT start at vec4 x_stage(lid) (XS: the
// workgroup first copies them to workgroup memory and xq reads there; see ops.py _MVQ_X)
{{XSRC}}

{{UNIT}}

{{UNIT2}}

{{REDUCE}}

fn store(k: u32, n: u32, v: f32) {
    if (n < P.n1) {
        Y[k * P.n1 + n] = v;
    } else if (n < P.n2) {
        Y2[k * (P.n2 - P.n1) + n - P.n1] = v;
    } else {
        Y3[k * (P.N - P.n2) + n - P.n2] = v;
    }
}

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32 {{SG_ARGS}}) {
    let xb = x_stage(lid);
    let t = {{THREAD}};
    let lane = t % L;
    let row0 = ((wid.x + wid.y * nwg.x) * S + t / L) * R;
    var acc: array<f32, NACC>;
    var wrow: array<u32, R>;
    let second = row0 >= P.nw1 && P.nw1 < P.N;
    let r0 = select(0u, P.nw1, second);
    for (var r = 0u; r < R; r++) { wrow[r] = (min(row0 + r, P.N - 1u) - r0) * P.row_vec4; }
    if (second) {
        for (var i = 0u; i < (UNITS + L - 1u) / L; i++) {
            let u = lane + i * L;
            if (UNITS % L == 0u || u < UNITS) {
                var xs: array<XU, NT>;
                for (var k = 0u; k < NT; k++) { xs[k] = mvq_x(u, xb + k * XROW); }
                for (var r = 0u; r < R; r++) {
                    let w = mvq_w2(wrow[r], u);
                    for (var k = 0u; k < NT; k++) { acc[r * NT + k] += mvq_dot(w, xs[k]); }
                }
            }
        }
    } else {
        for (var i = 0u; i < (UNITS + L - 1u) / L; i++) {
            let u = lane + i * L;
            if (UNITS % L == 0u || u < UNITS) {
                var xs: array<XU, NT>;
                for (var k = 0u; k < NT; k++) { xs[k] = mvq_x(u, xb + k * XROW); }
                for (var r = 0u; r < R; r++) {
                    let w = mvq_w(wrow[r], u);
                    for (var k = 0u; k < NT; k++) { acc[r * NT + k] += mvq_dot(w, xs[k]); }
                }
            }
        }
    }
    reduce_rows(&acc, t);
    if (lane == 0u) {
        for (var r = 0u; r < R; r++) {
            let n = row0 + r;
            if (n < P.N) {
                for (var k = 0u; k < NT; k++) {
                    let v = acc[r * NT + k];
                    store(P.t0 + k, n, select(v, v + BIAS[n], P.has_bias != 0u));
                }
            }
        }
    }
}
