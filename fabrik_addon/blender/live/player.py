"""Step Through Iterations while it runs: the chain posed at a step (``show_step``), played at a pace (a
``bpy.app.timers`` timer), drawn in the viewport (a ``SpaceView3D`` draw handler, added only where a screen is
drawn: headless, stepping only poses), and left (``leave``), which puts back the chain's pose. The session and
its step live in ``LIVE``. A new frame, loading a file, an undo or redo and unregistering end it; saving keeps
the pose found in the file, not the step. (Its operators and slider: ``ui.live_operators``.)
"""

from __future__ import annotations

import contextlib

import bpy
from bpy.app.handlers import persistent

from . import preview
from .state import LIVE
from .stepping import Session

_LINE = (1.0, 0.55, 0.1, 1.0)
_TARGET = (0.2, 0.9, 0.3, 1.0)


def start(session: Session, draw: bool) -> None:
    """Step through ``session``, posed at its first step, the preview paused on its armature; with ``draw``,
    the viewport overlay shows the steps."""
    leave()
    LIVE.session, LIVE.step = session, 0
    preview.pause(session.armature_uid, True)
    show_overlay(draw)
    show_step(0)


def show_step(step: int) -> None:
    """Pose the stepped chain as it was after ``step`` (clamped to the steps there are) and redraw."""
    session = LIVE.session
    if session is None:
        return
    if not session.alive():
        leave()
        return
    LIVE.step = min(max(int(step), 0), len(session.steps.names) - 1)
    session.pose(LIVE.step)
    _redraw()


def leave(restore: bool = True) -> None:
    """Stop stepping: stop playing, remove the overlay and (``restore``) put back the pose the chain's bones
    had, where they still are, renamed or not (the other bones keep whatever the user did meanwhile). The
    state is cleared first, so that an armature deleted meanwhile ends the session too."""
    if bpy.app.timers.is_registered(advance):
        bpy.app.timers.unregister(advance)
    show_overlay(False)
    ended, LIVE.session, LIVE.step = LIVE.session, None, 0
    if ended is not None:
        preview.pause(ended.armature_uid, False)
        if restore:
            with contextlib.suppress(ReferenceError):  # the armature was deleted
                if ended.put_back():
                    ended.armature.update_tag()
    _redraw()


def play(seconds_per_step: float) -> None:
    """Play the steps one after another, ``seconds_per_step`` apart (from the first, if at the last), or pause
    if playing."""
    session = LIVE.session
    if session is None:
        return
    if playing():
        bpy.app.timers.unregister(advance)
        return
    if LIVE.step >= len(session.steps.names) - 1:
        show_step(0)
    bpy.app.timers.register(advance, first_interval=seconds_per_step)


def playing() -> bool:
    return bool(bpy.app.timers.is_registered(advance))


def advance() -> float | None:
    """The timer's call: pose the next step; the seconds until the next call, or None at the last step."""
    session = LIVE.session
    if session is None:
        return None
    if not session.alive():
        leave()
        return None
    show_step(LIVE.step + 1)
    if LIVE.step >= len(session.steps.names) - 1:
        return None
    return _pace(bpy.context.window_manager)


def _pace(window_manager: bpy.types.WindowManager | None) -> float:
    """Seconds per step while playing (the slider's pace, ``ui.live_operators.FABRIK_PG_playback``)."""
    assert window_manager is not None
    return float(window_manager.fabrik_playback.seconds_per_step)  # type: ignore[attr-defined]


def _put_back() -> None:
    """The pose found, on the chain's bones, while the session goes on (``_on_save_post`` shows the step
    again)."""
    if LIVE.session is None:
        return
    try:
        LIVE.session.put_back()
    except ReferenceError:  # the armature was deleted
        leave(restore=False)


def _redraw() -> None:
    window_manager = bpy.context.window_manager
    if window_manager is None:
        return
    for window in window_manager.windows:
        screen = window.screen
        for area in screen.areas if screen is not None else ():
            if area.type == "VIEW_3D":
                area.tag_redraw()


def overlay_shown() -> bool:
    return LIVE.overlay is not None


def show_overlay(show: bool) -> None:
    """Add the viewport overlay's draw handler (``show``), or remove it; either only once."""
    if show and LIVE.overlay is None:
        LIVE.overlay = bpy.types.SpaceView3D.draw_handler_add(_draw, (), "WINDOW", "POST_VIEW")
    elif not show and LIVE.overlay is not None:
        bpy.types.SpaceView3D.draw_handler_remove(LIVE.overlay, "WINDOW")
        LIVE.overlay = None


def _draw() -> None:
    """The overlay: the step's joints joined by lines, and the target."""
    session = LIVE.session
    if session is None or not session.alive():
        return
    import gpu
    from gpu_extras.batch import batch_for_shader

    joints = [tuple(p) for p in session.steps.world[LIVE.step].tolist()]
    shader = gpu.shader.from_builtin("UNIFORM_COLOR")
    gpu.state.depth_test_set("NONE")
    gpu.state.line_width_set(3.0)
    gpu.state.point_size_set(9.0)
    shader.uniform_float("color", _LINE)
    batch_for_shader(shader, "LINE_STRIP", {"pos": joints}).draw(shader)
    batch_for_shader(shader, "POINTS", {"pos": joints}).draw(shader)
    shader.uniform_float("color", _TARGET)
    batch_for_shader(shader, "POINTS", {"pos": [tuple(session.steps.target.tolist())]}).draw(shader)
    gpu.state.line_width_set(1.0)
    gpu.state.point_size_set(1.0)


@persistent  # type: ignore[untyped-decorator]
def _on_load(*_: object) -> None:
    leave(restore=False)  # the armature belongs to the file being left


@persistent  # type: ignore[untyped-decorator]
def _on_undo(*_: object) -> None:
    """An undo or redo reads the file anew from an undo step, the armature too: stepping ends first, the
    chain's pose put back while the session's armature is still the one in memory."""
    leave()


@persistent  # type: ignore[untyped-decorator]
def _on_frame_change(*_: object) -> None:
    """A new frame ends stepping (the steps are the old frame's), the chain's pose put back before the new frame
    is evaluated, so its animation shows."""
    if LIVE.session is not None:
        leave()


@persistent  # type: ignore[untyped-decorator]
def _on_save_pre(*_: object) -> None:
    _put_back()  # the file keeps the pose found, not a step of the solve


@persistent  # type: ignore[untyped-decorator]
def _on_save_post(*_: object) -> None:
    if LIVE.session is not None:
        show_step(LIVE.step)


#: The handler lists stepping needs, and its function on each.
_HANDLERS = (
    (bpy.app.handlers.load_pre, _on_load),
    (bpy.app.handlers.undo_pre, _on_undo),
    (bpy.app.handlers.redo_pre, _on_undo),
    (bpy.app.handlers.frame_change_pre, _on_frame_change),
    (bpy.app.handlers.save_pre, _on_save_pre),
    (bpy.app.handlers.save_post, _on_save_post),
)


def register() -> None:
    for handlers, handler in _HANDLERS:
        handlers.append(handler)


def unregister() -> None:
    leave()
    for handlers, handler in _HANDLERS:
        while handler in handlers:
            handlers.remove(handler)
