// out = f(x) elementwise; `s` is the op's scalar (scale factor, softcap).
struct Params { n: u32, s: f32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read_write> Y: array<f32>;

fn gelu(x: f32) -> f32 {
    let inner = 0.79788456080286535587989211986876 * x * (1.0 + 0.044715 * x * x);
    return 0.5 * x * (1.0 + tanh(inner));
}

fn gelu_table(x: f32) -> f32 {  // ggml's f16 lookup table: f16 in, f16 out
    if (x <= -10.0) { return 0.0; }
    if (x >= 10.0) { return x; }
    return quantizeToF16(gelu(quantizeToF16(x)));
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= P.n) { return; }
    let x = X[i];
    let s = P.s;
    Y[i] = {{EXPR}};
}
