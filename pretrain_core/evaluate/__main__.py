import sys

from pretrain_core.evaluate.cli import main

sys.exit(main())
