from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.policy_match_claims import PolicyMatchClaims


T = TypeVar("T", bound="PolicyMatch")


@_attrs_define
class PolicyMatch:
    """Which callers a policy applies to. Every criterion given must hold; an empty match applies
    to everyone.

        Attributes:
            subs (list[str] | None | Unset): Globs on the token's `sub` (`team-a-*`); one must match.
            roles (list[str] | None | Unset): Roles of the token's `roles` claim; the caller must hold one.
            claims (PolicyMatchClaims | Unset): Claims the token must carry with these values (a claim that is a list must
                contain the
                value; a string value is a glob on a string claim).
    """

    subs: list[str] | None | Unset = UNSET
    roles: list[str] | None | Unset = UNSET
    claims: PolicyMatchClaims | Unset = UNSET

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

        claims: dict[str, Any] | Unset = UNSET
        if not isinstance(self.claims, Unset):
            claims = self.claims.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if subs is not UNSET:
            field_dict["subs"] = subs
        if roles is not UNSET:
            field_dict["roles"] = roles
        if claims is not UNSET:
            field_dict["claims"] = claims

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.policy_match_claims import PolicyMatchClaims

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

        _claims = d.pop("claims", UNSET)
        claims: PolicyMatchClaims | Unset
        if isinstance(_claims, Unset):
            claims = UNSET
        else:
            claims = PolicyMatchClaims.from_dict(_claims)

        policy_match = cls(
            subs=subs,
            roles=roles,
            claims=claims,
        )

        return policy_match
