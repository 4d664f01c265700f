from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.approvers import Approvers


T = TypeVar("T", bound="ApproveRule")


@_attrs_define
class ApproveRule:
    """A call of a matching caller to one of `tools` becomes a task in `input_required` held for
    a person: an approver decides on it (`POST /v1/approvals/{task_id}`) before `expires`, and
    only an approval runs it, once, with exactly the arguments held.

        Attributes:
            tools (list[str] | None | Unset): Globs on catalogue names (`ev__get-sum`, `github__delete_*`).
            approvers (Approvers | Unset): Who may decide on a held call: every criterion given must hold (at least one is
                given).
            expires (None | str | Unset): How long a held call waits for a decision: `30s`, `10m`, `2h` (1 s to 24 h).
                Default: ''. Example: 10m.
    """

    tools: list[str] | None | Unset = UNSET
    approvers: Approvers | Unset = UNSET
    expires: None | str | Unset = ""

    def to_dict(self) -> dict[str, Any]:
        tools: list[str] | None | Unset
        if isinstance(self.tools, Unset):
            tools = UNSET
        elif isinstance(self.tools, list):
            tools = self.tools

        else:
            tools = self.tools

        approvers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.approvers, Unset):
            approvers = self.approvers.to_dict()

        expires: None | str | Unset
        if isinstance(self.expires, Unset):
            expires = UNSET
        else:
            expires = self.expires

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if tools is not UNSET:
            field_dict["tools"] = tools
        if approvers is not UNSET:
            field_dict["approvers"] = approvers
        if expires is not UNSET:
            field_dict["expires"] = expires

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.approvers import Approvers

        d = dict(src_dict)

        def _parse_tools(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                tools_type_0 = cast(list[str], data)

                return tools_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        tools = _parse_tools(d.pop("tools", UNSET))

        _approvers = d.pop("approvers", UNSET)
        approvers: Approvers | Unset
        if isinstance(_approvers, Unset):
            approvers = UNSET
        else:
            approvers = Approvers.from_dict(_approvers)

        def _parse_expires(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        expires = _parse_expires(d.pop("expires", UNSET))

        approve_rule = cls(
            tools=tools,
            approvers=approvers,
            expires=expires,
        )

        return approve_rule
