import sys

from ohseven.referee.cli.main import main

sys.exit(main())
