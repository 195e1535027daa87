from pretrain_cli.main import main

raise SystemExit(main())
