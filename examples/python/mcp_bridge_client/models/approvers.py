from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="Approvers")


@_attrs_define
class Approvers:
    """Who may decide on a held call: every criterion given must hold (at least one is given).

    Attributes:
        subs (list[str] | None | Unset): Globs on the approver's `sub`; one must match.
        roles (list[str] | None | Unset): Roles of the approver's token; it must hold one.
    """

    subs: list[str] | None | Unset = UNSET
    roles: list[str] | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        subs: list[str] | None | Unset
        if isinstance(self.subs, Unset):
            subs = UNSET
        elif isinstance(self.subs, list):
            subs = self.subs

        else:
            subs = self.subs

        roles: list[str] | None | Unset
        if isinstance(self.roles, Unset):
            roles = UNSET
        elif isinstance(self.roles, list):
            roles = self.roles

        else:
            roles = self.roles

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if subs is not UNSET:
            field_dict["subs"] = subs
        if roles is not UNSET:
            field_dict["roles"] = roles

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_subs(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                subs_type_0 = cast(list[str], data)

                return subs_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        subs = _parse_subs(d.pop("subs", UNSET))

        def _parse_roles(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                roles_type_0 = cast(list[str], data)

                return roles_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        roles = _parse_roles(d.pop("roles", UNSET))

        approvers = cls(
            subs=subs,
            roles=roles,
        )

        return approvers
