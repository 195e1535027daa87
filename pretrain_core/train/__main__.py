import sys

from pretrain_core.train.launch.cli import main

sys.exit(main())
