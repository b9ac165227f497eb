"""Allow `python -m jaxloopfix`."""

from jaxloopfix.cli import run

if __name__ == "__main__":
    run()
