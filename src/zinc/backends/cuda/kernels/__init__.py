"""Triton kernels of the CUDA backend: quantized matvec and dequantization (`quant`), row norms,
rope and GLU (`elementwise`), decode attention (`attention`). Every kernel also runs under
``TRITON_INTERPRET=1`` on CPU tensors, which is how CI checks them against the NumPy backend."""
