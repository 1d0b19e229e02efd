codeunit 50106 "Open Job Lister Good"
{
    procedure OpenJobNumbers(CustomerNo: Code[20]; var JobNos: List of [Code[20]])
    var
        Job: Record Job;
    begin
        Job.SetRange("Bill-to Customer No.", CustomerNo);
        Job.SetRange(Status, Job.Status::Open);
        Job.SetLoadFields("No.");
        if Job.FindSet() then
            repeat
                JobNos.Add(Job."No.");
            until Job.Next() = 0;
    end;
}
