"""``python -m irscale`` runs the command line."""
import sys

from irscale.cli import main

sys.exit(main())
