"""`python -m groundstate` runs the console script."""

from groundstate.cli import main

main()
