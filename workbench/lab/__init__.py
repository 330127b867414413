"""Real experiments run on this machine.

Each experiment module offers a Python entry point that returns or writes data
in a format the loaders read, owns that capture format (its writer, reader and
schema), and offers ``add_parser(subparsers)`` to appear as
``workbench lab <name>``. Every experiment touches loopback addresses only
(:func:`workbench.lab._net.check_loopback`, called before any socket is
opened, in child processes too), is bounded in time and count, stops by
itself, cleans up its files and sockets, and shows progress.
"""
