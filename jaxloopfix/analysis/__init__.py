"""Static analysis: which code is traced, what a loop iterates over, and what it carries."""
