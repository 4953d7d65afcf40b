"""Reduce Keys: the keys an armature's bones have, thinned within an error (``run``), and what it refuses
(``checks``). The thinning itself is a bake's (``blender.reduction``).

Imports ``bake``, ``reduction``, ``rig`` and the pure ``reduction``; the API and the operators import only the
names below.
"""

from .run import reduce_keys

__all__ = ["reduce_keys"]
