// out = act(gate) * up elementwise.
struct Params { n: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> G: array<f32>;
@group(0) @binding(2) var<storage, read> U: array<f32>;
@group(0) @binding(3) var<storage, read_write> Y: array<f32>;

fn gelu(x: f32) -> f32 {
    let inner = 0.79788456080286535587989211986876 * x * (1.0 + 0.044715 * x * x);
    return 0.5 * x * (1.0 + tanh(inner));
}

fn gelu_table(x: f32) -> f32 {
    if (x <= -10.0) { return 0.0; }
    if (x >= 10.0) { return x; }
    return quantizeToF16(gelu(quantizeToF16(x)));
}

fn swiglu_oai(g: f32, u: f32) -> f32 {
    let x = min(g, 7.0);
    let y = clamp(u, -7.0, 7.0);
    return x / (1.0 + exp(1.702 * -x)) * (y + 1.0);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= P.n) { return; }
    let g = G[i];
    let u = U[i];
    Y[i] = {{EXPR}};
}
