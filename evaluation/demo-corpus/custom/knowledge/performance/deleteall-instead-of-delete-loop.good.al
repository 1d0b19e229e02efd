codeunit 50160 "Comment Purge Good"
{
    procedure PurgeOrderComments(OrderNo: Code[20])
    var
        SalesCommentLine: Record "Sales Comment Line";
    begin
        SalesCommentLine.SetRange("Document Type", SalesCommentLine."Document Type"::Order);
        SalesCommentLine.SetRange("No.", OrderNo);
        SalesCommentLine.DeleteAll();
    end;
}
