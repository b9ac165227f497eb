"""Allow `python -m jaxloopfix`."""

from jaxloopfix.cli import main

if __name__ == "__main__":
    main()
