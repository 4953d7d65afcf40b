"""The Blender layer: it reads scenes into arrays, calls the solver, writes keyframes, and is the add-on an
animator uses. Its packages, lowest first, each importing only the faces of those below it:

- ``rig``: the armature as the add-on reads and writes it (chains of bones, channels, keys, pose snapshots,
  what follows what);
- ``bake``: the bake (its checks, frame walks, the chain-or-tree unit it solves, the keys it writes and its
  report), Blender's IK constraints as its input, and Clear;
- ``layer``: the bake as a layer over the animation (an NLA track blended with Combine), Apply Layer;
- ``planting``: Plant Feet and Detect Contacts on an armature's animation, a bake with its goals computed
  (``fabrik_addon.planting``), and contact marks as keys;
- ``targets``: Targets from Animation, Empties keyed where the chains' tips and bends are;
- ``reduction``: fewer keys within an error (``key_error``): an armature's keyed bones posed as Blender plays
  them, a bake's keys thinned and measured (the bake asks it which keys to keep); ``reduce_keys``, the same on
  keys that exist;
- ``live``: the live preview and Step Through Iterations, with their state;
- ``ui``: the sidebar's panel, chain list and operators.

Beside them: ``compat`` (every difference between Blender versions), ``properties`` (the settings stored on
each armature, ``Object.fabrik``, and the ``BakeSettings`` they stand for), ``chain_list`` (an armature's
chain list baked as the Bake button bakes it), ``versioning`` (older files' settings brought up to date) and
``addon`` (registering it all). The API imports only the names below.
"""

from . import addon
from .bake import BakeReport, RigBakeReport, bake, bake_ik_constraints, clear
from .chain_list import armatures_with_chains, bake_chains
from .layer import AppliedLayer, apply_layer
from .planting import FootReport, PlantReport, detect_contacts, plant_feet
from .reduce_keys import reduce_keys
from .targets import TargetsReport, targets_from_animation

__all__ = [
    "AppliedLayer",
    "BakeReport",
    "FootReport",
    "PlantReport",
    "RigBakeReport",
    "TargetsReport",
    "addon",
    "apply_layer",
    "armatures_with_chains",
    "bake",
    "bake_chains",
    "bake_ik_constraints",
    "clear",
    "detect_contacts",
    "plant_feet",
    "reduce_keys",
    "targets_from_animation",
]
