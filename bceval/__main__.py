import sys

from bceval.cli import main

sys.exit(main())
