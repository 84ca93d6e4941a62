// Sum of one value per invocation over a 256-invocation workgroup (call from uniform control flow).
var<workgroup> red: array<f32, 256>;

fn sum256(tid: u32, v: f32) -> f32 {
    red[tid] = v;
    workgroupBarrier();
    for (var k = 128u; k > 0u; k >>= 1u) {
        if (tid < k) { red[tid] += red[tid + k]; }
        workgroupBarrier();
    }
    return red[0];
}
