"""The engine: the KV cache (`cache`), and the scheduling and sampling that drive a model step by step."""
