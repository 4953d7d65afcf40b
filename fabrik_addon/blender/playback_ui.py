"""Step Through Iterations: its operators and property group, the timer that plays the steps and the
viewport overlay that draws them (Solve Now and Key Current Frame are ``solve_now``'s).

The stepping state is transient: the step, the pace and the session live on the window manager and in this
module (never saved with the file). The overlay is a ``SpaceView3D`` draw handler, added only where a screen
is drawn (not in the background: headless, stepping only poses) and removed on leaving, on loading a file and
on unregistering; the timer (``bpy.app.timers``) likewise.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import bpy
from bpy.app.handlers import persistent
from bpy.props import FloatProperty, IntProperty, PointerProperty

from . import preview, stepping
from .operators import ArmatureOperator, sentence
from .playback import Session, begin
from .properties import settings_of, solver_settings

if TYPE_CHECKING:
    from bpy.stub_internal.rna_enums import OperatorReturnItems

#: The chain being stepped through, if any.
_session: Session | None = None
_step = 0
#: The overlay's draw handler, while one is added.
_overlay: object | None = None

_LINE = (1.0, 0.55, 0.1, 1.0)
_TARGET = (0.2, 0.9, 0.3, 1.0)


def overlay_shown() -> bool:
    return _overlay is not None


def session() -> Session | None:
    """The chain being stepped through now, if any."""
    return _session


def current_step() -> int:
    return _step


def _get_step(_: bpy.types.PropertyGroup) -> int:
    return _step


def _set_step(_: bpy.types.PropertyGroup, value: int) -> None:
    show_step(value)


def show_step(step: int) -> None:
    """Pose the stepped chain as it was after ``step`` (clamped to the steps there are) and redraw."""
    global _step
    if _session is None:
        return
    if not _session.alive():
        leave(restore=False)
        return
    _step = min(max(int(step), 0), len(_session.steps.names) - 1)
    _session.pose(_step)
    _redraw()


class FABRIK_PG_playback(bpy.types.PropertyGroup):
    """Stepping through iterations (``WindowManager.fabrik_playback``, not saved)."""

    step: IntProperty(  # type: ignore[valid-type]
        name="Iteration",
        description="The step of the solve to pose the chain at, in half passes (0: the pose it started from)",
        get=_get_step,
        set=_set_step,
        min=0,
    )
    seconds_per_step: FloatProperty(  # type: ignore[valid-type]
        name="Pace",
        description="Seconds each step shows while playing",
        default=0.4,
        min=0.02,
        max=10.0,
        subtype="TIME_ABSOLUTE",
        unit="TIME_ABSOLUTE",
    )


def leave(restore: bool = True) -> None:
    """Stop stepping: stop playing, remove the overlay and (``restore``) put back the pose the chain's bones
    had (the other bones keep whatever the user did meanwhile). The state is cleared first, so that an
    armature deleted meanwhile (or bones added to it) ends the session too."""
    global _session, _step
    if bpy.app.timers.is_registered(advance):
        bpy.app.timers.unregister(advance)
    show_overlay(False)
    ended, _session, _step = _session, None, 0
    stepping.set_active(False)
    if ended is not None:
        preview.pause(ended.armature_uid, False)
        if restore:
            with contextlib.suppress(ReferenceError, ValueError):
                if ended.put_back():
                    ended.armature.update_tag()
    _redraw()


def _put_back() -> None:
    """The pose found, on the chain's bones, while the session goes on (``_pose_again`` shows the step again)."""
    if _session is None:
        return
    try:
        _session.put_back()
    except (ReferenceError, ValueError):
        leave(restore=False)


def playing() -> bool:
    return bool(bpy.app.timers.is_registered(advance))


def advance() -> float | None:
    """The timer's call: pose the next step; the seconds until the next call, or None at the last step."""
    if _session is None:
        return None
    if not _session.alive():
        leave(restore=False)
        return None
    last = len(_session.steps.names) - 1
    show_step(_step + 1)
    if _step >= last:
        return None
    return _pace(bpy.context.window_manager)


def _pace(window_manager: bpy.types.WindowManager | None) -> float:
    """Seconds per step while playing."""
    assert window_manager is not None
    return float(window_manager.fabrik_playback.seconds_per_step)  # type: ignore[attr-defined]


def _redraw() -> None:
    window_manager = bpy.context.window_manager
    if window_manager is None:
        return
    for window in window_manager.windows:
        screen = window.screen
        for area in screen.areas if screen is not None else ():
            if area.type == "VIEW_3D":
                area.tag_redraw()


def show_overlay(show: bool) -> None:
    """Add the viewport overlay's draw handler (``show``), or remove it; either only once."""
    global _overlay
    if show and _overlay is None:
        _overlay = bpy.types.SpaceView3D.draw_handler_add(_draw, (), "WINDOW", "POST_VIEW")
    elif not show and _overlay is not None:
        bpy.types.SpaceView3D.draw_handler_remove(_overlay, "WINDOW")
        _overlay = None


def _draw() -> None:
    """The overlay: the step's joints joined by lines, and the target."""
    if _session is None or not _session.alive():
        return
    import gpu
    from gpu_extras.batch import batch_for_shader

    joints = [tuple(p) for p in _session.steps.world[_step].tolist()]
    shader = gpu.shader.from_builtin("UNIFORM_COLOR")
    gpu.state.depth_test_set("NONE")
    gpu.state.line_width_set(3.0)
    gpu.state.point_size_set(9.0)
    shader.uniform_float("color", _LINE)
    batch_for_shader(shader, "LINE_STRIP", {"pos": joints}).draw(shader)
    batch_for_shader(shader, "POINTS", {"pos": joints}).draw(shader)
    shader.uniform_float("color", _TARGET)
    batch_for_shader(shader, "POINTS", {"pos": [tuple(_session.steps.target.tolist())]}).draw(shader)
    gpu.state.line_width_set(1.0)
    gpu.state.point_size_set(1.0)


class FABRIK_OT_step_through(ArmatureOperator):
    """Solve the selected chain at the current frame keeping every step, and pose it at the first: then the
    Iteration slider or Play poses it as it was after each step (leaving puts its pose back)"""

    bl_idname = "fabrik.step_through"
    bl_label = "Step Through Iterations"
    bl_options = {"REGISTER"}  # noqa: RUF012 (stepping writes no keys, and leaving puts the pose back)

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        armature, scene, view_layer = context.active_object, context.scene, context.view_layer
        assert armature is not None
        assert scene is not None
        assert view_layer is not None
        global _session, _step
        leave()
        view_layer.update()
        try:
            started = begin(
                armature, settings_of(armature).active_chain, solver_settings(armature), scene.frame_current
            )
        except (TypeError, ValueError) as error:
            self.report({"ERROR"}, sentence(error))
            return {"CANCELLED"}
        _session, _step = started, 0
        stepping.set_active(True)
        preview.pause(started.armature_uid, True)
        show_overlay(not bpy.app.background and context.screen is not None)  # nothing is drawn headless
        show_step(0)
        steps = len(started.steps.names) - 1
        self.report({"INFO"}, f"{steps} steps to step through at frame {scene.frame_current}")
        return {"FINISHED"}


class _SteppingOperator(bpy.types.Operator):
    """What Play and Leave share (not registered itself): a poll that needs a chain being stepped through."""

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if _session is None:
            cls.poll_message_set("Start Step Through Iterations first")
        return _session is not None


class FABRIK_OT_step_play(_SteppingOperator):
    """Play the steps one after another at the chosen pace (from the first, if at the last), or pause"""

    bl_idname = "fabrik.step_play"
    bl_label = "Play"

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        assert _session is not None
        if playing():
            bpy.app.timers.unregister(advance)
        else:
            if _step >= len(_session.steps.names) - 1:
                show_step(0)
            bpy.app.timers.register(advance, first_interval=_pace(context.window_manager))
        return {"FINISHED"}


class FABRIK_OT_step_leave(_SteppingOperator):
    """Stop stepping through iterations and put back the pose the chain had"""

    bl_idname = "fabrik.step_leave"
    bl_label = "Leave"

    def execute(self, context: bpy.types.Context) -> set[OperatorReturnItems]:
        leave()
        return {"FINISHED"}


@persistent  # type: ignore[untyped-decorator]
def _on_load(*_: object) -> None:
    leave(restore=False)  # the armature belongs to the file being left


@persistent  # type: ignore[untyped-decorator]
def _on_frame_change(*_: object) -> None:
    """A new frame ends stepping (the steps are the old frame's), the chain's pose put back before the new frame
    is evaluated, so its animation shows."""
    if _session is not None:
        leave()


@persistent  # type: ignore[untyped-decorator]
def _on_save_pre(*_: object) -> None:
    _put_back()  # the file keeps the pose found, not a step of the solve


@persistent  # type: ignore[untyped-decorator]
def _on_save_post(*_: object) -> None:
    if _session is not None:
        show_step(_step)


#: The handler lists stepping needs, and its function on each.
_HANDLERS = (
    (bpy.app.handlers.load_pre, _on_load),
    (bpy.app.handlers.frame_change_pre, _on_frame_change),
    (bpy.app.handlers.save_pre, _on_save_pre),
    (bpy.app.handlers.save_post, _on_save_post),
)


CLASSES = (
    FABRIK_PG_playback,
    FABRIK_OT_step_through,
    FABRIK_OT_step_play,
    FABRIK_OT_step_leave,
)


def register() -> None:
    bpy.types.WindowManager.fabrik_playback = PointerProperty(  # type: ignore[attr-defined, func-returns-value]
        type=FABRIK_PG_playback, name="FABRIK Step Through Iterations"
    )
    for handlers, handler in _HANDLERS:
        handlers.append(handler)


def unregister() -> None:
    leave()
    for handlers, handler in _HANDLERS:
        while handler in handlers:
            handlers.remove(handler)
    del bpy.types.WindowManager.fabrik_playback  # type: ignore[attr-defined]
