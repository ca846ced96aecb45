"""The parts of a pod's and its containers' security contexts that the API server compares with
the pod's deprecated seccomp and AppArmor annotations on create (``security_validation.py``),
and the pod's OS, which turns the AppArmor comparison off for Windows pods. The scheduler reads
none of them; every other security-context field is skipped while decoding.
"""

from __future__ import annotations

from topospread.api.base import _Obj

# The profile types, as the API spells them (core/v1 SeccompProfileType, AppArmorProfileType).
PROFILE_LOCALHOST = "Localhost"
PROFILE_RUNTIME_DEFAULT = "RuntimeDefault"
PROFILE_UNCONFINED = "Unconfined"
PROFILE_TYPES = (PROFILE_LOCALHOST, PROFILE_RUNTIME_DEFAULT, PROFILE_UNCONFINED)
OS_WINDOWS = "windows"


class SeccompProfile(_Obj, frozen=True):
    type: str = ""
    localhost_profile: str | None = None


class AppArmorProfile(_Obj, frozen=True):
    type: str = ""
    localhost_profile: str | None = None


class PodSecurityContext(_Obj, frozen=True):
    seccomp_profile: SeccompProfile | None = None
    app_armor_profile: AppArmorProfile | None = None


class SecurityContext(_Obj, frozen=True):
    """A container's security context."""

    seccomp_profile: SeccompProfile | None = None
    app_armor_profile: AppArmorProfile | None = None


class PodOS(_Obj, frozen=True):
    name: str = ""


class EphemeralContainer(_Obj, frozen=True):
    """A debugging container: only ever added to a running pod, never on create."""

    name: str = ""
    image: str = ""
    security_context: SecurityContext | None = None
    target_container_name: str = ""
