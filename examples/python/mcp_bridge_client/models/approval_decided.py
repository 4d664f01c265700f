from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.decision import Decision, check_decision

if TYPE_CHECKING:
    from ..models.task_info import TaskInfo


T = TypeVar("T", bound="ApprovalDecided")


@_attrs_define
class ApprovalDecided:
    """The answer to a decision: the caller's task, `working` once approved (its result follows on
    the caller's `/v1/tasks/{task_id}`), `failed` once denied.

        Attributes:
            task_id (str):
            decision (Decision): What an approver decides.
            task (TaskInfo): A task: where its call runs and how far it is.
    """

    task_id: str
    decision: Decision
    task: TaskInfo
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        task_id = self.task_id

        decision: str = self.decision

        task = self.task.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "task_id": task_id,
                "decision": decision,
                "task": task,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.task_info import TaskInfo

        d = dict(src_dict)
        task_id = d.pop("task_id")

        decision = check_decision(d.pop("decision"))

        task = TaskInfo.from_dict(d.pop("task"))

        approval_decided = cls(
            task_id=task_id,
            decision=decision,
            task=task,
        )

        approval_decided.additional_properties = d
        return approval_decided

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
