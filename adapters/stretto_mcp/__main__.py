"""`python -m stretto_mcp -- <server command>`: the proxy without the stretto CLI."""

from stretto_mcp.run import main

raise SystemExit(main())
