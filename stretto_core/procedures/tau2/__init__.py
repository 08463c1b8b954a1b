"""τ²-bench telecom solo: the environment, its reward, renamed customers, and a demonstrator."""
