// y (NT, N) = act(x @ Wg.T) * (x @ Wu.T) for NT <= 4 activation rows (rows T0 .. T0 + NT) on 8-bit activations: mvq.wgsl
// over the gate and up rows at once (both weights of one type and layout), the GLU applied by the lane
// that holds the row sums. QOUT: also write y's 8-bit activations to QO for the next matvec (needs
// S * R % 32 == 0 and N % 256 == 0: a workgroup quantizes its own 32-row blocks).
struct Params { N: u32, row_vec4: u32, t0: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> XQ: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> W: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> W2: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> Y: array<f32>;
@group(0) @binding(5) var<storage, read_write> QO: array<u32>;

const L: u32 = {{L}}u;
const R: u32 = {{R}}u;
const S: u32 = {{S}}u;
const NT: u32 = {{NT}}u;
const K: u32 = {{K}}u;
const UNITS: u32 = {{UNITS}}u;
const QOUT: bool = {{QOUT}};
const WG: u32 = L * S;
const NACC: u32 = R * NT;
const XROW: u32 = K / 16u + K / 32u;  // vec4 per activation row (lib/q8.wgsl)
const SR: u32 = S * R;  // rows per workgroup

// xq(i): vec4 i of the activations; x_stage: rows t0 .. t0 + NT start at vec4 x_stage(lid) (XS: the
// workgroup first copies them to workgroup memory and xq reads there; see ops.py _MVQ_X)
{{XSRC}}

{{UNIT}}

{{UNIT2}}

{{REDUCE}}

// #include "lib/activations.wgsl"
// #include "lib/q8.wgsl"

fn act(g: f32, u: f32) -> f32 {
    return {{EXPR}};
}

var<workgroup> yo: array<f32, NT * SR>;

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32 {{SG_ARGS}}) {
    let xb = x_stage(lid);
    let t = {{THREAD}};
    let lane = t % L;
    let wg = wid.x + wid.y * nwg.x;
    let row0 = (wg * S + t / L) * R;
    var ag: array<f32, NACC>;
    var au: array<f32, NACC>;
    var wrow: array<u32, R>;
    for (var r = 0u; r < R; r++) { wrow[r] = min(row0 + r, P.N - 1u) * P.row_vec4; }
    for (var i = 0u; i < (UNITS + L - 1u) / L; i++) {
        let u = lane + i * L;
        if (UNITS % L == 0u || u < UNITS) {
            var xs: array<XU, NT>;
            for (var k = 0u; k < NT; k++) { xs[k] = mvq_x(u, xb + k * XROW); }
            for (var r = 0u; r < R; r++) {
                let wg_ = mvq_w(wrow[r], u);
                let wu_ = mvq_w2(wrow[r], u);
                for (var k = 0u; k < NT; k++) {
                    ag[r * NT + k] += mvq_dot(wg_, xs[k]);
                    au[r * NT + k] += mvq_dot(wu_, xs[k]);
                }
            }
        }
    }
    reduce_rows(&ag, t);
    reduce_rows(&au, t);
    if (lane == 0u) {
        for (var r = 0u; r < R; r++) {
            let n = row0 + r;
            for (var k = 0u; k < NT; k++) {
                let v = act(ag[r * NT + k], au[r * NT + k]);
                if (n < P.N) { Y[(P.t0 + k) * P.N + n] = v; }
                if (QOUT) { yo[k * SR + (t / L) * R + r] = v; }
            }
        }
    }
    if (QOUT) {
        workgroupBarrier();
        let k = t / (SR / 32u);
        let j = t % (SR / 32u);
        if (t < NT * SR / 32u && wg * SR + 32u * j < P.N) {
            var v: array<vec4<f32>, 8>;
            for (var i = 0u; i < 8u; i++) {
                let o = k * SR + 32u * j + 4u * i;
                v[i] = vec4<f32>(yo[o], yo[o + 1u], yo[o + 2u], yo[o + 3u]);
            }
            q8_store_block((P.t0 + k) * q8_row_words(P.N), P.N, (wg * SR) / 32u + j, v);
        }
    }
}
