"""fsmviz: see regex-guided generation. `python app.py --help` for the options."""

from fsmviz.app.server import main

if __name__ == "__main__":
    main()
