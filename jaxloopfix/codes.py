"""Rule codes and names, importable without the rules themselves (libcst): the CLI needs them
to validate `--select` and to print results, and a cached run never loads the engine."""

RULE_NAMES: dict[str, str] = {
    "JLF001": "loop-to-scan",
    "JLF002": "carry-loop-to-scan",
    "JLF003": "traced-trip-count",
    "JLF004": "traced-condition",
    "JLF005": "traced-slice",
    "JLF006": "host-conversion",
}
