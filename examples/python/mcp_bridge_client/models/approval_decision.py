from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.decision import Decision, check_decision
from ..types import UNSET, Unset

T = TypeVar("T", bound="ApprovalDecision")


@_attrs_define
class ApprovalDecision:
    """`POST /v1/approvals/{task_id}`.

    Attributes:
        decision (Decision): What an approver decides.
        args_sha256 (None | str): The `args_sha256` of the held call decided on; another is 409 and nothing runs.
        reason (None | str | Unset): Why (a denial's reason is the failed task's message).
    """

    decision: Decision
    args_sha256: None | str
    reason: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        decision: str = self.decision

        args_sha256: None | str
        args_sha256 = self.args_sha256

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "decision": decision,
                "args_sha256": args_sha256,
            }
        )
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        decision = check_decision(d.pop("decision"))

        def _parse_args_sha256(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        args_sha256 = _parse_args_sha256(d.pop("args_sha256"))

        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))

        approval_decision = cls(
            decision=decision,
            args_sha256=args_sha256,
            reason=reason,
        )

        return approval_decision
