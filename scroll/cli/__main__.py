"""`python -m scroll.cli ...`: the `scroll` command without the console script."""
from . import main

main()
