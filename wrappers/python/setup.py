"""Marks the wheel as platform-specific: it carries compiled libraries (see pyproject.toml)."""
from setuptools import setup
from setuptools.dist import Distribution


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(distclass=BinaryDistribution)
