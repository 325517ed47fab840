"""Built-in plugin: the offline mutation model, served through litellm as ``offline/...``."""

from evoforge.plugins import hookimpl


def _setup_offline() -> None:
    from evoforge.evolve.offline import register_offline_provider

    register_offline_provider()


@hookimpl
def register_models(register):
    register("offline", _setup_offline)
