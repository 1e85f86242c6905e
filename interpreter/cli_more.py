"""Commands added on top of the core ones (odds, simulation, charts, overlays, editing)."""


def add_commands(sub, overlay_option) -> None:
    return None
