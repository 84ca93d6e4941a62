// out (T, K) = W[ids] dequantized: one thread per (token, 32-element chunk). W holds rows row0 .. row0 + N
// of the table (a table over the adapter's binding limit is uploaded in parts): tokens whose id is not
// among them are left to the other parts' dispatches.
struct Params { N: u32, K: u32, T: u32, row_words: u32, nchunk: u32, row0: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> IDS: array<i32>;
@group(0) @binding(2) var<storage, read> W: array<u32>;
@group(0) @binding(3) var<storage, read_write> Y: array<f32>;

{{DEQUANT}}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= P.T * P.nchunk) { return; }
    let t = i / P.nchunk;
    let c = i % P.nchunk;
    let row = u32(IDS[t]) - P.row0;
    if (row >= P.N) { return; }
    let v = chunk(row, c);
    let k0 = c * 32u;
    for (var l = 0u; l < min(32u, P.K - k0); l++) { Y[t * P.K + k0 + l] = v[l]; }
}
