"""Loaded at interpreter start when this folder is on PYTHONPATH (see ../record.py)."""
import os as _os
import sys as _sys

if _os.environ.get("ORACLE_ROOTS") and _os.environ.get("ORACLE_OUT"):
    _sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))
    try:
        import oracle_recorder as _oracle_recorder
    except Exception:  # noqa: BLE001 - never break the measured program
        pass
    else:
        _oracle_recorder.install()
    finally:
        del _sys.path[0]
