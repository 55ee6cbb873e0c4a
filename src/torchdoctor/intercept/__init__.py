"""Interception: the one place that patches torch and the process for the rest of torchdoctor.

`patching.Patcher` replaces attributes reversibly (every patch of torch, of the process's
`os._exit`, of a DataLoader iterator, goes through one); `hooks.Hooks` holds the hook points that
run-time changes act through (diagnose's probes call them from their own patches; `--try` trials
and `tune` install them directly). Neither diagnose nor trials owns this layer: both use it.
"""
