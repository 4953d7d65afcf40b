"""Test-wide settings: hypothesis runs derandomised (seeded), so every run checks the same examples."""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "seeded",
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("seeded")
