// Activations shared by the elementwise, GLU and fused matmul+GLU shaders.
fn gelu(x: f32) -> f32 {
    let inner = 0.79788456080286535587989211986876 * x * (1.0 + 0.044715 * x * x);
    return 0.5 * x * (1.0 + tanh(inner));
}

fn gelu_table(x: f32) -> f32 {  // ggml's f16 lookup table: f16 in, f16 out
    if (x <= -10.0) { return 0.0; }
    if (x >= 10.0) { return x; }
    return quantizeToF16(gelu(quantizeToF16(x)));
}

fn swiglu_oai(g: f32, u: f32) -> f32 {
    let x = min(g, 7.0);
    let y = clamp(u, -7.0, 7.0);
    return x / (1.0 + exp(1.702 * -x)) * (y + 1.0);
}
