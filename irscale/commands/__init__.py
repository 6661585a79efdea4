"""The subcommands of the ``irscale`` command line, one module each (each defines
``command``), imported by :mod:`irscale.cli` only when the subcommand runs."""
