"""Documented simulations of what cannot be captured on this machine.

Each generator writes the *real* file formats (CephFS debugfs metrics, ``/proc/net/dev``,
bpftrace maps, a TSDB CSV export) so its output goes through the same loaders a
user's captures would. Every parameter has a default taken from the investigation it
reproduces and can be overridden.

- :mod:`workbench.sim.fleet` — the CephFS front-end fleet of notebook 03;
- :mod:`workbench.sim.overnight` — the overnight API-call series of notebook 01.
"""
