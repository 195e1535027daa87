import sys

from pretrain_core.train.cli import main

sys.exit(main())
