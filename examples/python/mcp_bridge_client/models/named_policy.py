from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.defined_in import DefinedIn, check_defined_in
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.access_rules import AccessRules
    from ..models.approve_rule import ApproveRule
    from ..models.policy_match import PolicyMatch


T = TypeVar("T", bound="NamedPolicy")


@_attrs_define
class NamedPolicy:
    """A policy with its name, as listed.

    Attributes:
        match (PolicyMatch | Unset): Which callers a policy applies to. Every criterion given must hold; an empty match
            applies
            to everyone.
        allow (AccessRules | None | Unset):
        deny (AccessRules | None | Unset):
        approve (ApproveRule | None | Unset):
        name (str | Unset):  Default: ''.
        defined_in (DefinedIn | Unset): Where a policy or toolset was defined.
    """

    match: PolicyMatch | Unset = UNSET
    allow: AccessRules | None | Unset = UNSET
    deny: AccessRules | None | Unset = UNSET
    approve: ApproveRule | None | Unset = UNSET
    name: str | Unset = ""
    defined_in: DefinedIn | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.access_rules import AccessRules
        from ..models.approve_rule import ApproveRule

        match: dict[str, Any] | Unset = UNSET
        if not isinstance(self.match, Unset):
            match = self.match.to_dict()

        allow: dict[str, Any] | None | Unset
        if isinstance(self.allow, Unset):
            allow = UNSET
        elif isinstance(self.allow, AccessRules):
            allow = self.allow.to_dict()
        else:
            allow = self.allow

        deny: dict[str, Any] | None | Unset
        if isinstance(self.deny, Unset):
            deny = UNSET
        elif isinstance(self.deny, AccessRules):
            deny = self.deny.to_dict()
        else:
            deny = self.deny

        approve: dict[str, Any] | None | Unset
        if isinstance(self.approve, Unset):
            approve = UNSET
        elif isinstance(self.approve, ApproveRule):
            approve = self.approve.to_dict()
        else:
            approve = self.approve

        name = self.name

        defined_in: str | Unset = UNSET
        if not isinstance(self.defined_in, Unset):
            defined_in = self.defined_in

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if match is not UNSET:
            field_dict["match"] = match
        if allow is not UNSET:
            field_dict["allow"] = allow
        if deny is not UNSET:
            field_dict["deny"] = deny
        if approve is not UNSET:
            field_dict["approve"] = approve
        if name is not UNSET:
            field_dict["name"] = name
        if defined_in is not UNSET:
            field_dict["defined_in"] = defined_in

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.access_rules import AccessRules
        from ..models.approve_rule import ApproveRule
        from ..models.policy_match import PolicyMatch

        d = dict(src_dict)
        _match = d.pop("match", UNSET)
        match: PolicyMatch | Unset
        if isinstance(_match, Unset):
            match = UNSET
        else:
            match = PolicyMatch.from_dict(_match)

        def _parse_allow(data: object) -> AccessRules | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                allow_type_0 = AccessRules.from_dict(data)

                return allow_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AccessRules | None | Unset, data)

        allow = _parse_allow(d.pop("allow", UNSET))

        def _parse_deny(data: object) -> AccessRules | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                deny_type_0 = AccessRules.from_dict(data)

                return deny_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AccessRules | None | Unset, data)

        deny = _parse_deny(d.pop("deny", UNSET))

        def _parse_approve(data: object) -> ApproveRule | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                approve_type_0 = ApproveRule.from_dict(data)

                return approve_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ApproveRule | None | Unset, data)

        approve = _parse_approve(d.pop("approve", UNSET))

        name = d.pop("name", UNSET)

        _defined_in = d.pop("defined_in", UNSET)
        defined_in: DefinedIn | Unset
        if isinstance(_defined_in, Unset):
            defined_in = UNSET
        else:
            defined_in = check_defined_in(_defined_in)

        named_policy = cls(
            match=match,
            allow=allow,
            deny=deny,
            approve=approve,
            name=name,
            defined_in=defined_in,
        )

        named_policy.additional_properties = d
        return named_policy

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
