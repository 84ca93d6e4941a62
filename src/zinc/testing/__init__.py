"""Test and benchmark helpers. The llama.cpp oracle needs the `test` extra (llama-cpp-python)."""
