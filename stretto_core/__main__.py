from stretto_core.cli import main

raise SystemExit(main())
